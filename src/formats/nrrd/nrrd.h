/*
 * nrrd.h - what the NRRD files share: one header being read (nrrd.c
 * parses its lines, nrrd_files.c turns its "data file" field into the
 * files and their offsets, and gives the messages both say).  nrrd.c
 * calls nrrd_files.c, never the other way.
 */
#ifndef PARLOAD_FORMATS_NRRD_H
#define PARLOAD_FORMATS_NRRD_H

#include "formats/formats.h"

#define MAX_HEADER ((size_t)16 << 20) /* bytes of header text read */
#define MAX_FILES ((uint64_t)1 << 20) /* data files one header may name */

enum form { DF_NONE, DF_ONE, DF_LIST, DF_PATTERN };

/* One header being read. */
typedef struct hdr {
	const char *path;
	parload_error *err;
	unsigned line;        /* the line being read, from 1 */
	uint64_t seen;        /* fields given: bits of their ids */
	const char *field;    /* the field being read, for messages */
	int dim;
	uint64_t sizes[3];
	int type;             /* PARLOAD_PIXEL_*, 0 until given */
	int endian;           /* PARLOAD_ENC_LE or _BE, -1 until given */
	bool raw;             /* encoding: raw given */
	int64_t byte_skip;
	uint64_t line_skip;
	enum form form;
	int subdim;           /* 0: not given */
	unsigned df_line;     /* the line of "data file" */
	const char *name;     /* DF_ONE: the file; DF_PATTERN: the format */
	int64_t first, last, step;
	size_t end;           /* bytes of the header: attached data from here */
	size_t dirlen;        /* path's directory, its '/' included */
	char **paths;         /* the data files, joined to the directory */
	size_t n, cap;
	unsigned flags;       /* the source's PARLOAD_SRC_* */
	struct parload__file_id *ids; /* PARLOAD_SRC_CONFINE: as checked */
} hdr;

/* nrrd_files.c, the messages.  A failure of the header's line being
 * read (its field named): "PATH: line L: field 'F': TEXT". */
int parload__nrrd_fail(hdr *h, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A failure of data file i of the header being read, naming the line
 * that names it. */
int parload__nrrd_fail_file(hdr *h, size_t i, int code, int sys_errno,
			    const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* The line that names data file i: the "data file" line, or the list's
 * line of it. */
unsigned parload__nrrd_file_line(unsigned line, bool list, size_t i);
/* A format with exactly one integer conversion and '%%' for a percent
 * sign; *is_signed tells %d and %i. */
bool parload__nrrd_one_conversion(const char *f, bool *is_signed);

/* nrrd_files.c: the data files. */
int parload__nrrd_nomem(hdr *h);
/* Append the directory of the header and name (unless absolute). */
int parload__nrrd_add_path(hdr *h, const char *name);
/* The data files of a header of views views (one, a LIST or a pattern),
 * their number checked against the views. */
int parload__nrrd_data_files(hdr *h, uint64_t views);
/* PARLOAD_SRC_CONFINE: each data file, resolved, below the header's
 * directory (checked before any is opened). */
int parload__nrrd_confine(hdr *h);
/* The offset of the data in each file (byte skip, line skip, an
 * attached header's end) into d. */
int parload__nrrd_offsets(hdr *h, parload_desc *d);

#endif /* PARLOAD_FORMATS_NRRD_H */
