ministat nofile
