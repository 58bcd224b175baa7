/*
 * load.h - the top: one load from its request (load.c), the source opened
 * and described through its driver (source.c), a load on a thread of its
 * own (stream.c).  Everything below is called from here; nothing below
 * calls back up.
 */
#ifndef PARLOAD_LOAD_H
#define PARLOAD_LOAD_H

#include "formats/formats.h"

/* ---- source.c: where a load reads from ---- */

/* Open the request's file (or take its descriptor) and find what it is: a
 * regular file (its size) or a stream.  wait: a FIFO's writer is waited
 * for (a load: its cancel, on_wait and follow timeout stop the wait);
 * else none is (a description, which refuses streams). */
int parload__source_open(parload__ctx *c, const parload_request *req,
			 bool wait);
/* Close what parload__source_open opened; never the caller's descriptor. */
void parload__source_close(parload__ctx *c);
/* Validate the file header's bytes and fit the file's size: ETRUNCATED or
 * ETRAILING, or with PARLOAD_OPT_ALLOW_TRUNCATED a file cut short keeps
 * its complete views. */
int parload__source_header(parload__ctx *c, const unsigned char *b);
/* The layout the request gives (or its .nhdr), NULL for parload's own
 * format, whose header is read. */
const parload_desc *parload__source_given(const parload__ctx *c);
/* The load of a given layout: checked, and fitted to the files' sizes
 * (a raw stream's views, each file's share of them), or, for parload's
 * own format, to the file as a read header would be. */
int parload__source_describe(parload__ctx *c, const parload_desc *given);
/* After the last read: fail with PARLOAD_ETRUNCATED if a file has become
 * shorter than the views up to stream view last need.  A read can race a truncation and copy the
 * zeros the kernel writes over a cut page; the size afterwards tells. */
int parload__source_recheck(parload__ctx *c, uint64_t last);


#endif /* PARLOAD_LOAD_H */
