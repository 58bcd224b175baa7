/*
 * damage.h - damaged files as data: each row makes one bad file out of a
 * good stream (or none at all) and says what loading it must report.
 * check_format holds the loader to the rows; check_strategies holds every
 * configuration to what the parallel loader reports.
 */
#ifndef PARLOAD_DAMAGE_H
#define PARLOAD_DAMAGE_H

#include <stddef.h>
#include <stdint.h>

/* The good stream every row starts from: TU_DAMAGE_VIEWS views of 4 x 4
 * u8, 48-byte records. */
#define TU_DAMAGE_VIEWS 10
#define TU_DAMAGE_REC 48
#define TU_DAMAGE_SIZE (64 + TU_DAMAGE_VIEWS * TU_DAMAGE_REC)

enum tu_damage_kind {
	TU_PATCH,     /* write len bytes at offset */
	TU_CUT,       /* cut or extend the file to offset bytes */
	TU_MISSING,   /* no file at all */
	TU_DIRECTORY, /* a directory where the file should be */
};

typedef struct tu_damage {
	const char *what;
	enum tu_damage_kind kind;
	uint64_t offset;
	const char *bytes; /* TU_PATCH */
	size_t len;
	int code;          /* what the load returns */
	uint64_t view;     /* the error's view and byte offset */
	uint64_t err_offset;
	const char *words; /* in the message */
} tu_damage;

extern const tu_damage tu_damages[];
extern const int tu_n_damages;

/* Make row i's file in the scratch directory; its path is the caller's
 * to free. */
char *tu_damaged_file(int i);

#endif
