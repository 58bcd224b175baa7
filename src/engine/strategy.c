/*
 * strategy.c - the table of strategies (PARLOAD_STRATEGY_MAP in parload.h:
 * one row each, its name there, its read step and capabilities in a file of
 * its family); their names are names.c's.
 */
#include "engine/engine.h"

#include <string.h>

static const parload__strategy *const strategies[] = {
#define PARLOAD__STRATEGY_ROW_(name, id, text)                                 \
	[PARLOAD_STRATEGY_##name] = &parload__strategy_##id,
	PARLOAD_STRATEGY_MAP(PARLOAD__STRATEGY_ROW_)
#undef PARLOAD__STRATEGY_ROW_
};

const parload__strategy *parload__strategy_get(int s)
{
	if (s < 0 || s >= PARLOAD_STRATEGY_COUNT_)
		return NULL;
	return strategies[s];
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
