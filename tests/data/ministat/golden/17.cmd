ministat -d , cols
