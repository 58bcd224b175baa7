/*
 * hdf5_choose.c - what an HDF5 file means, for both readers
 * (hdf5_core.h): which dataset a source reads, which of its frames, and
 * their angles, from what the back-end answers of the file (parload's
 * own reader, hdf5_native.c, which answers "unsure" where it cannot
 * tell; libhdf5's, hdf5.c).  Compiled into the library and into the HDF5
 * module.
 */
#include "formats/hdf5/hdf5_core.h"

#include <stdio.h>
#include <string.h>

#define UNSURE PARLOAD__H5_UNSURE

/* The frames' name, from parload.h's table (this file is compiled into
 * the HDF5 module too, which calls no public function but through its
 * host table). */
static const char *frames_name(parload_frames fr)
{
	static const char *const names[] = {
#define FRAMES_NAME_AT(name, value, text) [value] = text,
		PARLOAD_FRAMES_MAP(FRAMES_NAME_AT)
#undef FRAMES_NAME_AT
	};

	return (unsigned)fr < sizeof(names) / sizeof(names[0]) ?
		       names[fr] :
		       names[PARLOAD_FRAMES_PROJECTIONS];
}

/* The dataset's group ("" for the root), for image_key and angles. */
static void dir_of(parload__h5pick *p)
{
	char *slash;

	snprintf(p->dir, sizeof(p->dir), "%s", p->name);
	slash = strrchr(p->dir, '/');
	if (slash)
		*(slash == p->dir ? slash + 1 : slash) = '\0';
	if (strcmp(p->dir, "/") == 0)
		p->dir[0] = '\0';
}

/* DXchange: the frames' dataset of the three. */
static int dxchange(const parload__h5be *be, parload__h5pick *p,
		    const char *const *dx, parload_frames fr)
{
	int rc;

	p->dxchange = true;
	snprintf(p->name, sizeof(p->name), "%s", dx[fr]);
	if ((rc = be->is_dataset(be->ctx, p->name)) != 0)
		return rc == 1 ? 0 : rc;
	return parload__fail_path(p->err, PARLOAD_EINVAL, 0, p->file,
				  "no %s: a DXchange file without %s",
				  frames_name(fr), dx[fr]);
}

/* A dataset named: DXchange's /exchange/data takes its flats and darks
 * from data_white and data_dark, as unnamed; one with an image_key beside
 * it is NXtomo's (its frames picked by the key, its angles the entry's). */
static int named_kind(const parload__h5be *be, parload__h5pick *p,
		      const char *const *dx, parload_frames fr)
{
	char key[1200];
	const char *slash = strrchr(p->name, '/');
	int rc;

	if (strcmp(p->name, dx[0]) == 0)
		return dxchange(be, p, dx, fr);
	snprintf(key, sizeof(key), "%.*s/image_key",
		 (int)(slash - p->name), p->name);
	rc = be->is_dataset(be->ctx, key);
	p->nxtomo = rc == 1;
	return rc == UNSURE ? rc : 0;
}

/* A master file's group: its datasets data_000001, ... (links to data
 * files, as DECTRIS's NXmx files hold them, or datasets) are one stream,
 * the first its name: 1; 0 for none, or an error. */
static int master(const parload__h5be *be, parload__h5pick *p,
		  const char *group)
{
	int rc = be->members(be->ctx, group, &p->part, &p->parts);

	if (rc || p->parts == 0)
		return rc;
	snprintf(p->name, sizeof(p->name), "%s", p->part[0]);
	return 1;
}

/* No dataset named: DXchange, NXtomo, a master file's /entry/data, the
 * only 3-D one. */
static int unnamed(const parload__h5be *be, parload__h5pick *p,
		   const char *const *dx, parload_frames fr)
{
	parload__h5found3 fd;
	int rc;

	if ((rc = be->is_dataset(be->ctx, dx[0])) != 0)
		return rc == 1 ? dxchange(be, p, dx, fr) : rc;
	if ((rc = be->nxtomo(be->ctx)) != 0)
		return rc == 1 ? (p->nxtomo = true, 0) : rc;
	if ((rc = master(be, p, PARLOAD__H5_MASTER)) != 0)
		return rc == 1 ? 0 : rc;
	if ((rc = be->find3(be->ctx, &fd)) != 0)
		return rc;
	if (fd.count == 1 && fr == PARLOAD_FRAMES_PROJECTIONS) {
		snprintf(p->name, sizeof(p->name), "%s", fd.first);
		return 0;
	}
	if (fd.count == 1)
		return parload__fail_path(p->err, PARLOAD_EINVAL, 0, p->file,
					  "no %s: neither DXchange nor NXtomo "
					  "(an image_key)", frames_name(fr));
	return parload__fail_path(p->err, PARLOAD_EINVAL, 0, p->file,
				  "has no dataset given and %zu 3-D datasets%s%s",
				  fd.count, fd.count ? ": " : "",
				  fd.count ? fd.list + 2 : "");
}

/* A name that is no dataset: a master file's group of data_000001, ...,
 * else no such dataset. */
static int named_group(const parload__h5be *be, parload__h5pick *p)
{
	char group[sizeof(p->name)];
	int rc;

	snprintf(group, sizeof(group), "%s", p->name);
	rc = master(be, p, group);
	return rc == 1 ? 0 : rc ? rc : be->no_such(be->ctx, group);
}

int parload__h5_choose(const parload__h5be *be, parload__h5pick *p,
		       const char *named, parload_frames fr)
{
	static const char *const dx[] = PARLOAD__H5_DXCHANGE;
	int rc;

	if (named) {
		snprintf(p->name, sizeof(p->name), "%s%s",
			 named[0] == '/' ? "" : "/", named);
		rc = be->is_dataset(be->ctx, p->name);
		rc = rc == 1 ? named_kind(be, p, dx, fr) :
		     rc == 0 ? named_group(be, p) :
			       rc;
	} else {
		rc = unnamed(be, p, dx, fr);
	}
	if (rc == 0)
		dir_of(p);
	return rc;
}

/* A table of n entries of size bytes, zeroed; n is a count read from the
 * file, which the memory check let through. */
static void *table(const parload__h5pick *p, uint64_t n, size_t size)
{
	uint64_t bytes;

	if (!parload__mul_ok(n ? n : 1, size, &bytes) || bytes > SIZE_MAX) {
		parload__fail_nomem(p->err, p->file);
		return NULL;
	}
	return parload__sys_calloc((size_t)bytes, 1);
}

/* The most a frame of the file costs in the readers' tables: its place
 * among the frames read (8), its image_key (4), its angle (8 read, 4
 * kept) and, chunked, its view (8). */
#define FRAME_TABLES 32

int parload__h5_frames(const parload__h5be *be, parload__h5pick *p,
		       parload_frames fr, uint64_t all)
{
	char key[1200];
	int32_t *k;
	int rc;

	snprintf(key, sizeof(key), "table entries (the frames of %s)",
		 p->name);
	if ((rc = parload__memory_check(p->err, p->file, all, key,
					FRAME_TABLES)))
		return rc;
	snprintf(key, sizeof(key), "%s/image_key", p->dir);
	if (!(p->frame = table(p, all, sizeof(*p->frame))) ||
	    !(k = table(p, all, sizeof(*k))))
		return PARLOAD_ENOMEM;
	rc = p->dxchange ? 1 : be->read_1d(be->ctx, key, false, k, all, NULL);
	for (uint64_t i = 0; rc == 0 && i < all; i++)
		if (k[i] == (int32_t)fr)
			p->frame[p->n++] = i;
	for (uint64_t i = 0; rc == 1 && i < all; i++)
		p->frame[p->n++] = i;
	parload__sys_free(k);
	if (rc == UNSURE)
		return rc;
	if (rc == 1 && fr != PARLOAD_FRAMES_PROJECTIONS && !p->dxchange)
		return parload__fail_path(p->err, PARLOAD_EINVAL, 0, p->file,
					  "%s: no %s: no image_key beside it",
					  p->name, frames_name(fr));
	if (rc <= 0 && p->n == 0)
		return rc ? rc : parload__fail_path(p->err, PARLOAD_EINVAL, 0,
						    p->file,
						    "%s: no %s (image_key %d)",
						    p->name, frames_name(fr),
						    (int)fr);
	return rc < 0 ? rc : 0;
}

/* The angles of all frames into v (doubles), *deg degrees a unit: 0, 1
 * for none, an error or UNSURE. */
static int angles_of(const parload__h5be *be, const parload__h5pick *p,
		     uint64_t all, double *v, double *deg)
{
	static const char *const dx[] = PARLOAD__H5_DXCHANGE;
	static const char *const in_sample[] = { "rotation_angle",
						 "goniometer/omega",
						 "transformations/omega" };
	char name[1200];
	const char *slash;
	int rc;

	if (strcmp(p->name, dx[0]) == 0)
		return be->read_1d(be->ctx, PARLOAD__H5_THETA, true, v, all,
				   deg);
	if (!p->nxtomo && p->dxchange)
		return 1;
	snprintf(name, sizeof(name), "%s/rotation_angle", p->dir);
	rc = be->read_1d(be->ctx, name, true, v, all, deg);
	if (rc != 1 || (!p->nxtomo && !p->parts))
		return rc;
	/* The entry's sample: NXtomo's rotation_angle, NXmx's omega. */
	slash = p->entry[0] ? p->name + strlen(p->entry) :
			      strchr(p->name + 1, '/');
	for (size_t k = 0; rc == 1 && slash && k < 3; k++) {
		snprintf(name, sizeof(name), "%.*s/sample/%s",
			 (int)(slash - p->name), p->name, in_sample[k]);
		rc = be->read_1d(be->ctx, name, true, v, all, deg);
	}
	return rc;
}

int parload__h5_angles(const parload__h5be *be, parload__h5pick *p,
		       uint64_t all, float **angles)
{
	double *v, deg = 1.0;
	float *a;
	int rc;

	*angles = NULL;
	if (!(v = table(p, all, sizeof(*v))))
		return PARLOAD_ENOMEM;
	rc = angles_of(be, p, all, v, &deg);
	a = rc == 0 ? table(p, p->n, sizeof(*a)) : NULL;
	for (uint64_t i = 0; a && i < p->n; i++)
		a[i] = (float)(v[p->frame[i]] * deg);
	parload__sys_free(v);
	if (rc == 0 && !a)
		return PARLOAD_ENOMEM;
	*angles = a;
	return rc == 1 ? 0 : rc;
}

void parload__h5_unpad(char *text, size_t n)
{
	text[n] = '\0';
	while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\0'))
		text[--n] = '\0';
}

void parload__h5_names_free(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		parload__sys_free(names[i]);
	parload__sys_free(names);
}

void parload__h5_pick_free(parload__h5pick *p)
{
	parload__sys_free(p->frame);
	parload__h5_names_free(p->part, p->parts);
	p->frame = NULL;
	p->part = NULL;
	p->n = p->parts = 0;
}
