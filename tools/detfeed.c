/*
 * detfeed.c - the command-line tool: a table of subcommands.
 */
#include "cli.h"
#include "detfeed_cuda.h"
#include "detfeed_img.h"

#include <string.h>

static int cmd_version(int argc, char **argv);
static int cmd_help(int argc, char **argv);

static const cli_cmd commands[] = {
    {"check", "scan a dataset and report what it holds and what is skipped", cmd_check},
    {"color", "apply the RandomHSV colour operation to a PNG", cmd_color},
    {"sample", "one augmented sample as a PNG, with its recipe and labels", cmd_sample},
    {"grid", "one augmented batch drawn with boxes, class names and keypoints",
     cmd_grid},
    {"replay", "run every batch of some epochs; counts and a digest of all bytes",
     cmd_replay},
    {"cache", "decode a dataset into the disk cache file the loader maps (cache=disk)",
     cmd_cache},
    {"synth", "write a synthetic detection dataset (YOLO layout)", cmd_synth},
    {"bench", "loader images/s and stage times (a dataset, or generated data)",
     cmd_bench},
    {"profile", "where the CPU time goes, per stage, as a table", cmd_profile},
    {"version", "print the version and what this build includes", cmd_version},
    {"help", "list the commands", cmd_help},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static int cmd_help(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("usage: detfeed COMMAND [options]   (detfeed COMMAND --help for more)\n\n"
           "detfeed is a training input pipeline for YOLO-style detectors.\n\n"
           "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        printf("  %-10s %s\n", commands[i].name, commands[i].summary);
    return CLI_OK;
}

static int cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const char *why = NULL;
    int ndev = detfeed_cuda_device_count(&why);
    printf("detfeed %s\n", detfeed_version_string());
    printf("cpu kernels: %s\n", cli_isa_name(detfeed_isa_best()));
    printf("cuda: %s", detfeed_cuda_built() ? "built" : "not built");
    if (detfeed_cuda_built())
        printf(", %d device(s)%s%s", ndev, ndev ? "" : ": ", ndev ? "" : why);
    printf("\n");
    return CLI_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return argc < 2 ? (cmd_help(0, NULL), CLI_USAGE) : cmd_help(0, NULL);
    if (strcmp(argv[1], "--version") == 0)
        return cmd_version(0, NULL);
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    if (strcmp(argv[1], "train") == 0 || strcmp(argv[1], "val") == 0)
        cli_error(
            "'%s' is a command of the Python package's detfeed, which runs "
            "Ultralytics' trainer (pip install the detfeed wheel with ultralytics, "
            "then detfeed %s ... or python -m detfeed %s ...)",
            argv[1], argv[1], argv[1]);
    else
        cli_error("unknown command '%s' (detfeed help lists them)", argv[1]);
    return CLI_USAGE;
}
