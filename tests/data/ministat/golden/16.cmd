ministat -C 4 cols
