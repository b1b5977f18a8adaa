ministat -C 2 cols
