/*
 * strategy.c - the table of strategies (PARLOAD_STRATEGY_MAP in parload.h:
 * one row each, its name there, its read step and capabilities in a file of
 * its family) and the names users give strategies and I/O APIs.
 */
#include "engine/engine.h"

#include <string.h>

static const parload__strategy *const strategies[] = {
#define PARLOAD__STRATEGY_ROW_(name, id, text)                                 \
	[PARLOAD_STRATEGY_##name] = &parload__strategy_##id,
	PARLOAD_STRATEGY_MAP(PARLOAD__STRATEGY_ROW_)
#undef PARLOAD__STRATEGY_ROW_
};

static const char *const strategy_names[] = {
#define PARLOAD__STRATEGY_NAME_(name, id, text) [PARLOAD_STRATEGY_##name] = text,
	PARLOAD_STRATEGY_MAP(PARLOAD__STRATEGY_NAME_)
#undef PARLOAD__STRATEGY_NAME_
};

const parload__strategy *parload__strategy_get(int s)
{
	if (s < 0 || s >= PARLOAD_STRATEGY_COUNT_)
		return NULL;
	return strategies[s];
}

const char *parload_strategy_name(int s)
{
	if (s < 0 || s >= PARLOAD_STRATEGY_COUNT_)
		return NULL;
	return strategy_names[s];
}

int parload_strategy_from_name(const char *name)
{
	for (int s = 0; name && s < PARLOAD_STRATEGY_COUNT_; s++)
		if (strcmp(name, strategy_names[s]) == 0)
			return s;
	return -1;
}

unsigned parload_strategy_caps(int s)
{
	const parload__strategy *st = parload__strategy_get(s);

	return st ? st->caps : 0;
}

int parload_strategy_uses_io(int s)
{
	return (parload_strategy_caps(s) & PARLOAD_CAP_IO) != 0;
}

static const char *const io_names[] = {
	[PARLOAD_IO_POSIX] = "posix",
	[PARLOAD_IO_STDIO] = "stdio",
};

const char *parload_io_name(int io)
{
	if (io < PARLOAD_IO_POSIX || io > PARLOAD_IO_STDIO)
		return NULL;
	return io_names[io];
}

int parload_io_from_name(const char *name)
{
	for (int i = PARLOAD_IO_POSIX; name && i <= PARLOAD_IO_STDIO; i++)
		if (strcmp(name, io_names[i]) == 0)
			return i;
	return -1;
}
