ministat -C 0 cols
