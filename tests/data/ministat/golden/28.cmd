ministat -w abc iguana
