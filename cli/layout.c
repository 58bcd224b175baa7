/*
 * layout.c - what a source's layout resolves to, file by file, for
 * 'parload info': the views each file holds and the bytes after them,
 * worked out from the files' sizes and the description the library
 * resolved (see common.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"

/* File f of the stream from view total on: its whole records (the last
 * one's gap may be missing), no more than the count leaves, and the bytes
 * after them. */
static void fit_file(const struct layout_view *lv, struct layout_file *f,
		     uint64_t total)
{
	const parload_desc *d = &lv->d;
	uint64_t body, n, used;

	f->first = total;
	if (f->size < d->offset) {
		f->short_offset = true;
		return;
	}
	body = f->size - d->offset;
	n = (body + d->gap) / d->record_size;
	if (lv->given_count && total + n >= lv->given_count)
		n = lv->given_count > total ? lv->given_count - total : 0;
	used = n * d->record_size;
	f->views = n;
	f->trailing = used < body ? body - used : 0;
}

void layout_init(struct layout_view *lv, const parload_desc *d,
		 uint64_t given_count)
{
	memset(lv, 0, sizeof(*lv));
	lv->d = *d;
	lv->given_count = given_count;
}

bool layout_add_files(struct layout_view *lv, const char *const *paths,
		      size_t n)
{
	uint64_t total = 0;

	lv->files = calloc(n ? n : 1, sizeof(*lv->files));
	if (!lv->files)
		return false;
	lv->nfiles = n;
	for (size_t i = 0; i < n; i++) {
		struct layout_file *f = &lv->files[i];
		struct stat st;

		f->path = paths[i];
		if (stat(f->path, &st) == 0)
			f->size = (uint64_t)st.st_size;
		fit_file(lv, f, total);
		total += f->views;
		lv->trailing += f->trailing;
	}
	return true;
}

static bool container(const parload_desc *d)
{
	return parload_format_is_container(d->format);
}

void layout_place(struct layout_view *lv, const parload_source *src)
{
	lv->placed = container(&lv->d) &&
		     parload_describe_raw(src, &lv->raw, lv->data_file,
					  sizeof(lv->data_file), NULL) == 0;
}

/* Whether lv's offset, header, gap and records mean anything: a raw
 * stream's, parload's own, a container's placed. */
static bool has_offset(const struct layout_view *lv)
{
	return !container(&lv->d) || lv->placed;
}

void layout_free(struct layout_view *lv)
{
	free(lv->files);
	lv->files = NULL;
}

/* What the bytes after a file's views are. */
static const char *trailing_kind(const struct layout_view *lv,
				 const struct layout_file *f)
{
	if (f->short_offset)
		return "shorter than the offset";
	if (!f->trailing)
		return NULL;
	return lv->given_count ? "ignored after the counted views" :
				 "a partial record";
}

/* The words of a layout: its format, its type, and the description as
 * given (its count only when it states one). */
struct layout_words {
	const char *format, *type;
	char text[512];
};

static void layout_words(const struct layout_view *lv, struct layout_words *w)
{
	parload_desc given = lv->placed ? lv->raw : lv->d;
	const char *type = parload_type_name(given.pixel_type, given.encoding);

	w->format = parload_format_name(lv->d.format);
	w->type = type ? type : "?";
	given.count = lv->given_count;
	parload_desc_format(&given, w->text, sizeof(w->text));
}

static void human_file(const struct layout_view *lv, size_t i)
{
	const struct layout_file *f = &lv->files[i];
	const char *kind = trailing_kind(lv, f);

	if (lv->nfiles > 1)
		printf("file %zu:%*s%s: ", i, i < 10 ? 12 : 11, "", f->path);
	else
		fputs("trailing_bytes:    ", stdout);
	if (lv->nfiles > 1)
		printf("views %" PRIu64 ":%" PRIu64 ", %" PRIu64 " bytes, ",
		       f->first, f->first + f->views, f->size);
	printf("%" PRIu64, f->trailing);
	if (lv->nfiles > 1 || kind)
		printf(" bytes after the last complete record");
	if (kind)
		printf(" (%s)", kind);
	putchar('\n');
}

/* The sizes of the record, as "name" and value, for both forms. */
struct size_field {
	const char *name;
	uint64_t value;
};

#define N_SIZES 6

/* The sizes; those of records (where has is false: a container not
 * placed) with a NULL name's place kept by "-". */
static void size_fields(const parload_desc *d, bool has,
			struct size_field f[N_SIZES])
{
	f[0] = (struct size_field){ "row_size", d->row_size };
	f[1] = (struct size_field){ "payload_size", d->payload_size };
	f[2] = (struct size_field){ has ? "record_size" : "-",
				    d->record_size };
	f[3] = (struct size_field){ "views", d->count };
	f[4] = (struct size_field){ has ? "first_record" : "-", d->offset };
	f[5] = (struct size_field){ NULL, 0 };
}

void layout_print_human(const struct layout_view *lv)
{
	const parload_desc *d = lv->placed ? &lv->raw : &lv->d;
	const bool has = has_offset(lv);
	struct size_field sizes[N_SIZES];
	struct layout_words w;

	layout_words(lv, &w);
	printf("format:            %s\n", w.format);
	if (has)
		printf("layout:            %s\n", w.text);
	if (lv->placed)
		printf("data_file:         %s\n", lv->data_file);
	printf("type:              %s (read into %s)\n", w.type,
	       parload_pixel_name(d->pixel_type));
	if (has) {
		printf("offset:            %" PRIu64 "\n", d->offset);
		printf("header:            %" PRIu64 "\n", d->header);
		printf("gap:               %" PRIu64 "\n", d->gap);
	}
	if (lv->given_count)
		printf("count:             %" PRIu64 "\n", lv->given_count);
	else
		printf("count:             none (as many as the files hold)\n");
	size_fields(d, has, sizes);
	for (const struct size_field *f = sizes; f->name; f++)
		if (f->name[0] != '-')
			printf("%s:%*s%" PRIu64 "\n", f->name,
			       (int)(18 - strlen(f->name)), "", f->value);
	for (size_t i = 0; i < lv->nfiles; i++)
		human_file(lv, i);
}

static void json_file(const struct layout_view *lv, size_t i)
{
	const struct layout_file *f = &lv->files[i];
	const char *kind = trailing_kind(lv, f);

	printf("%s{\"file\":", i ? "," : "");
	json_str(stdout, f->path);
	printf(",\"file_size\":%" PRIu64 ",\"first_view\":%" PRIu64
	       ",\"views\":%" PRIu64 ",\"trailing_bytes\":%" PRIu64
	       ",\"trailing\":", f->size, f->first, f->views, f->trailing);
	if (kind)
		json_str(stdout, kind);
	else
		fputs("null", stdout);
	putchar('}');
}

void layout_print_json(const struct layout_view *lv)
{
	const parload_desc *d = lv->placed ? &lv->raw : &lv->d;
	const bool has = has_offset(lv);
	struct size_field sizes[N_SIZES];
	struct layout_words w;

	layout_words(lv, &w);
	printf(",\"layout\":{\"format\":\"%s\",\"text\":", w.format);
	if (has)
		json_str(stdout, w.text);
	else
		fputs("null", stdout);
	if (lv->placed) {
		fputs(",\"data_file\":", stdout);
		json_str(stdout, lv->data_file);
	}
	printf(",\"width\":%" PRIu32 ",\"height\":%" PRIu32
	       ",\"type\":\"%s\",\"pixel_type\":\"%s\""
	       ",\"bytes_per_pixel\":%" PRIu32, d->width, d->height, w.type,
	       parload_pixel_name(d->pixel_type), d->bytes_per_pixel);
	if (has)
		printf(",\"offset\":%" PRIu64 ",\"header\":%" PRIu64
		       ",\"gap\":%" PRIu64, d->offset, d->header, d->gap);
	else
		fputs(",\"offset\":null,\"header\":null,\"gap\":null",
		      stdout);
	fputs(",\"count\":", stdout);
	if (lv->given_count)
		printf("%" PRIu64, lv->given_count);
	else
		fputs("null", stdout);
	size_fields(d, has, sizes);
	for (const struct size_field *f = sizes; f->name; f++)
		if (f->name[0] != '-')
			printf(",\"%s\":%" PRIu64, f->name, f->value);
		else
			printf(",\"%s\":null", f == &sizes[2] ?
						     "record_size" :
						     "first_record");
	fputs(",\"trailing_bytes\":", stdout);
	if (lv->files)
		printf("%" PRIu64 ",\"files\":[", lv->trailing);
	else
		fputs("null", stdout); /* a .nhdr names its files */
	for (size_t i = 0; i < lv->nfiles; i++)
		json_file(lv, i);
	fputs(lv->files ? "]}" : "}", stdout);
}
