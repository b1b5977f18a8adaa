ministat -c 97 iguana
