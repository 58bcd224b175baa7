/*
 * damage.c - the damaged files (see damage.h).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "damage.h"
#include "testutil.h"

#define NONE PARLOAD_NONE
#define REC TU_DAMAGE_REC
#define END TU_DAMAGE_SIZE

const tu_damage tu_damages[] = {
	{ "no such file", TU_MISSING, 0, NULL, 0, PARLOAD_EOPEN, NONE, NONE,
	  "No such file" },
	{ "a directory", TU_DIRECTORY, 0, NULL, 0, PARLOAD_ENOTREG, NONE, NONE,
	  "directory" },
	{ "empty", TU_CUT, 0, NULL, 0, PARLOAD_ETRUNCATED, NONE, 0,
	  "shorter than the 64-byte file header" },
	{ "shorter than the file header", TU_CUT, 10, NULL, 0,
	  PARLOAD_ETRUNCATED, NONE, 10, "10 bytes" },
	{ "bad magic", TU_PATCH, 1, "X", 1, PARLOAD_EMAGIC, NONE, 0,
	  "bad magic" },
	{ "major version 2", TU_PATCH, 8, "\x02\x00", 2, PARLOAD_EVERSION, NONE,
	  8, "version 2.0" },
	{ "bytes per pixel", TU_PATCH, 34, "\x04\x00", 2, PARLOAD_EGEOMETRY,
	  NONE, 34, "bytes_per_pixel is 4, but pixel type u8 has 1" },
	{ "the file header only", TU_CUT, 64, NULL, 0, PARLOAD_ETRUNCATED, NONE,
	  64, "holds 0 complete views" },
	{ "cut inside a view header", TU_CUT, 64 + 5 * REC + 20, NULL, 0,
	  PARLOAD_ETRUNCATED, NONE, 64 + 5 * REC + 20,
	  "holds 5 complete views" },
	{ "cut inside a payload", TU_CUT, 64 + 4 * REC + 40, NULL, 0,
	  PARLOAD_ETRUNCATED, NONE, 64 + 4 * REC + 40,
	  "holds 4 complete views" },
	{ "a trailing byte", TU_CUT, END + 1, NULL, 0, PARLOAD_ETRAILING, NONE,
	  END, "1 bytes after the last of its 10 views" },
	{ "3 trailing bytes", TU_CUT, END + 3, NULL, 0, PARLOAD_ETRAILING, NONE,
	  END, "3 bytes after the last of its 10 views" },
	{ "view 4 says it is view 7", TU_PATCH, 64 + 4 * REC,
	  "\x07\0\0\0\0\0\0\0", 8, PARLOAD_EVIEWINDEX, 4, 64 + 4 * REC,
	  "view_index 7, but it is view 4" },
	{ "view 3 says it is view 4", TU_PATCH, 64 + 3 * REC,
	  "\x04\0\0\0\0\0\0\0", 8, PARLOAD_EVIEWINDEX, 3, 64 + 3 * REC,
	  "view_index 4, but it is view 3" },
};
const int tu_n_damages = (int)(sizeof(tu_damages) / sizeof(tu_damages[0]));

char *tu_damaged_file(int i)
{
	const tu_damage *d = &tu_damages[i];
	char name[32];
	char *path;

	snprintf(name, sizeof(name), "damaged%d.raw", i);
	path = tu_path(name);
	switch (d->kind) {
	case TU_MISSING:
		break;
	case TU_DIRECTORY:
		/* Made again when Check runs every test in one process. */
		ck_assert(mkdir(path, 0700) == 0 || errno == EEXIST);
		break;
	case TU_CUT:
		tu_write_stream(path, TU_DAMAGE_VIEWS, 4, 4, PARLOAD_PIXEL_U8,
				0, 1);
		tu_truncate(path, d->offset);
		break;
	case TU_PATCH:
		tu_write_stream(path, TU_DAMAGE_VIEWS, 4, 4, PARLOAD_PIXEL_U8,
				0, 1);
		tu_patch(path, d->offset, d->bytes, d->len);
		break;
	}
	return path;
}
