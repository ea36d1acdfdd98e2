//! Real-time executor: runs request streams against files, block devices and arrays with io_uring or psync.
