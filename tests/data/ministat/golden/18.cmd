ministat const const
