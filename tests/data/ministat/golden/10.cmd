ministat -c 98 random0 random1 random2
