ministat -C 1x cols
