ministat -n even iguana
