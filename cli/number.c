/*
 * number.c - strict numbers and sizes for both commands (number.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "number.h"

bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end != '\0' || v > max)
		return false;
	*out = v;
	return true;
}

/* "", "K", "KiB", "m", ...: the shift of the unit, or -1. */
static int unit_shift(const char *s)
{
	static const char units[] = "KMGT";
	/* & ~0x20 folds k, m, g, t to upper case. */
	const int up = s[0] & ~0x20;
	const char *u = up ? strchr(units, up) : NULL;

	if (!s[0])
		return 0;
	if (!u || (strcmp(s + 1, "") != 0 && strcmp(s + 1, "iB") != 0))
		return -1;
	return 10 * (int)(u - units + 1);
}

/* "4096", "64K", "1M", "2GiB": binary multiples. */
bool parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	char *end;
	int shift;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return false;
	shift = unit_shift(end);
	if (shift < 0 || v > (unsigned long long)(SIZE_MAX >> shift))
		return false;
	*out = (size_t)v << shift;
	return true;
}
