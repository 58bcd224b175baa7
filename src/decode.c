/*
 * decode.c - a worker's strips: the rows of a container's compressed
 * strips (TIFF strips and tiles, HDF5 chunks), read and decoded by the
 * worker whose share needs them, outside any library lock.
 */
#include "internal.h"
