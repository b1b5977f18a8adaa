ministat -c abc iguana
