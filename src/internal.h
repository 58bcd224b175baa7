/*
 * internal.h - every layer's internal header at once, for the tests and
 * fuzzers that reach parload__ internals.  No file of the library includes
 * it: each includes its own folder's header (base/base.h, model/model.h,
 * io/io.h, codec/codec.h, engine/engine.h, formats/formats.h,
 * load/load.h), which includes the one below it.  docs/ARCHITECTURE.md
 * walks through the layers.
 */
#ifndef PARLOAD_INTERNAL_H
#define PARLOAD_INTERNAL_H

#include "load/load.h"

#endif /* PARLOAD_INTERNAL_H */
