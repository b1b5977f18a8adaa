ministat -q iguana
