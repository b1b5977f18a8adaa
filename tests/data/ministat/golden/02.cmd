ministat -s -w 60 -c 80 iguana chameleon
