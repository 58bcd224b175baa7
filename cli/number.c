/*
 * number.c - strict numbers and sizes for both commands (number.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "number.h"
#include "parload.h"

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

/* "4096", "64K", "1M", "2GiB": the library's sizes, within size_t. */
int parse_size(const char *s, size_t *out)
{
	uint64_t v;
	int rc = parload_size_parse(s, &v);

	if (rc == 0 && v > SIZE_MAX)
		rc = PARLOAD_EOVERFLOW;
	if (rc == 0)
		*out = (size_t)v;
	return rc;
}

const char *size_why(int rc)
{
	if (rc != PARLOAD_EOVERFLOW)
		return "";
	return SIZE_MAX == UINT64_MAX ? " (overflows 64 bits)" :
					" (too large for this machine)";
}
