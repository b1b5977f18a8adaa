ministat -A iguana chameleon
