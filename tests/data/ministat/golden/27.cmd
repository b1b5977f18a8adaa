ministat -w -3 iguana
