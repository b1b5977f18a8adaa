ministat -s random0 random1 random2 iguana
