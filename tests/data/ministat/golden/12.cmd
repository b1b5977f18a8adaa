ministat -w 5 iguana
