/*
 * main.c - the parload command: the table of subcommands and main().
 *
 *   parload [OPTIONS] [FILE...]     load each file (cmd_load.c)
 *   parload NAME [OPTIONS] ARGS...  a subcommand of SUBCOMMANDS below
 *   parload help                    the whole usage text
 *
 * The command uses libparload's public interface only, plus the generator
 * in cli/gen.c.  It never calls exit(): every path returns through main() so
 * that the loader, datasets and temporary files are always released.  Exit
 * status: 0 success, 1 a file failed, 2 usage error.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "common.h"

/* The subcommands: name and one-line summary.  cli/cmd_NAME.c defines
 * cmd_NAME() and cmd_NAME_help (see common.h). */
#define SUBCOMMANDS(X)                                                     \
	X(gen, "write a deterministic stream")                             \
	X(info, "show each file's header and whether it is valid")         \
	X(extract, "write a selection: NumPy, TIFF, HDF5, PNG, Zarr, a stream or pixels") \
	X(nhdr, "write a NRRD header that describes raw files in place")

struct subcommand {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	const char *help;
};

#define DECLARE(name, summary) SUBCOMMAND(name);
#define ROW(name, summary) { #name, cmd_##name, summary, cmd_##name##_help },

SUBCOMMANDS(DECLARE)
SUBCOMMAND(load); /* the command itself, with no name */

static const struct subcommand subcommands[] = { SUBCOMMANDS(ROW) };
#define N_SUBCOMMANDS (sizeof(subcommands) / sizeof(subcommands[0]))

/* A help text's first line: the arguments of its synopsis. */
static int first_line(const char *help)
{
	return (int)strcspn(help, "\n");
}

static void print_commands(void)
{
	printf("\nCommands, recognised only as the first argument (write "
	       "./gen to load\na file named gen):\n");
	for (size_t i = 0; i < N_SUBCOMMANDS; i++)
		printf("  %-9s%s\n", subcommands[i].name,
		       subcommands[i].summary);
	printf("  %-9s%s\n", "help", "show this help");
	printf("'" PROG " COMMAND --help' shows one command's help.\n");
}

/* parload --help, -h, help: the load's help, then every subcommand's. */
int print_full_help(void)
{
	printf("Usage: " PROG " %.*s\n", first_line(cmd_load_help),
	       cmd_load_help);
	for (size_t i = 0; i < N_SUBCOMMANDS; i++)
		printf("       " PROG " %s %.*s\n", subcommands[i].name,
		       first_line(subcommands[i].help), subcommands[i].help);
	printf("       " PROG " help\n");
	print_commands();
	fputs(cmd_load_help + first_line(cmd_load_help) + 1, stdout);
	for (size_t i = 0; i < N_SUBCOMMANDS; i++)
		printf("\n" PROG " %s %s", subcommands[i].name,
		       subcommands[i].help);
	fputs("\nExit status: 0 every file loaded (or written, or valid); "
	      "1 a file failed,\nthe others are still processed; 2 usage "
	      "error.\n\nSee parload(1) and docs/FORMAT.md for the file "
	      "format.\n", stdout);
	return EXIT_OK;
}

/* Run argv[1]'s subcommand, or the load. */
static int dispatch(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "help") == 0)
		return print_full_help();
	for (size_t i = 0; argc >= 2 && i < N_SUBCOMMANDS; i++)
		if (strcmp(argv[1], subcommands[i].name) == 0)
			return subcommands[i].run(argc - 1, argv + 1);
	return cmd_load(argc, argv);
}

/* As many files open as the hard limit allows: --concat of a folder of
 * frames opens every one at once, and the usual soft limit (1,024) is
 * below a scan's 2,000 frames. */
static void raise_open_files(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int main(int argc, char **argv)
{
	int status;

	/* Before any library thread exists, so that they inherit it. */
	catch_fatal_signals();
	raise_open_files();
	status = dispatch(argc, argv);
	/* A load cancelled by SIGINT or SIGTERM ends by that signal. */
	end_if_interrupted();

	/* Output that could not be written is a failure too (parload >
	 * /dev/full). */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		error_msg("write error: %s", strerror(errno));
		if (status == EXIT_OK)
			status = EXIT_FAIL;
	}
	return status;
}
