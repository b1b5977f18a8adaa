ministat -s -w 60 iguana chameleon
