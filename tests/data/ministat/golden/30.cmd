ministat -w
