/*
 * cmd_color.c - `detfeed color`: the colour operation on a PNG file.
 */
#include "cli.h"
#include "detfeed_img.h"

#include <string.h>

/* Parses "DH,DS,DV": exactly three finite numbers separated by commas. */
static bool parse_gains(const char *s, double g[3])
{
    char buf[256];
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n + 1);
    char *p = buf;
    for (int i = 0; i < 3; i++) {
        char *comma = strchr(p, ',');
        if ((i < 2) != (comma != NULL))
            return false;
        if (comma)
            *comma = '\0';
        if (!cli_parse_double(p, &g[i]))
            return false;
        p = comma ? comma + 1 : p;
    }
    return true;
}

/* --opencv and --cv-cpu into the stack; prints the problem otherwise. */
static int stack_options(const char *version, const char *cpu, detfeed_cv *cv)
{
    cv->ipp = 1;
    if (detfeed_cv_version_parse(version, &cv->version) != DETFEED_OK) {
        cli_error("--opencv: '%s' is not 4, 4-debian, 5.0 or 5.1", version);
        return CLI_USAGE;
    }
    if (detfeed_cv_cpu_parse(cpu, &cv->cpu) != DETFEED_OK) {
        cli_error("--cv-cpu: '%s' is not auto, sse, avx2 or avx512", cpu);
        return CLI_USAGE;
    }
    return CLI_OK;
}

static int color_file(const char *in, const char *out, const double g[3],
                      const detfeed_cv *cv, detfeed_isa isa)
{
    detfeed_codec *codec;
    int rc = detfeed_codec_create(&codec, 0);
    if (rc)
        return cli_error("%s", detfeed_strerror(rc));
    uint8_t *px = NULL, lut[3][256];
    int w = 0, h = 0, status = CLI_OK;
    rc = detfeed_codec_read_png(codec, in, &px, &w, &h);
    if (rc == DETFEED_OK)
        rc = detfeed_hsv_lut(g[0], g[1], g[2], lut);
    if (rc == DETFEED_OK)
        rc = detfeed_hsv_apply_cv(px, (size_t)w * 3, px, (size_t)w * 3, w, h, lut, cv,
                                  isa);
    if (rc == DETFEED_OK)
        rc = detfeed_codec_write_png(codec, out, px, (size_t)w * 3, w, h);
    if (rc != DETFEED_OK) {
        const char *msg = detfeed_codec_last_error(codec);
        status = cli_error("%s", msg[0] ? msg : detfeed_strerror(rc));
    }
    detfeed_free(px);
    detfeed_codec_destroy(codec);
    return status;
}

int cmd_color(int argc, char **argv)
{
    const char *gains = NULL, *isa_name = "auto", *version = "5.1", *cpu = "auto";
    const cli_opt opts[] = {
        {"gains", CLI_STRING, &gains, "DH,DS,DV",
         "post-multiplied gains dh=u0*hsv_h, ds=u1*hsv_s, dv=u2*hsv_v (required)", 0,
         0},
        {"opencv", CLI_STRING, &version, "V",
         "the OpenCV whose bytes to reproduce: 4 (the 4.x wheels), 4-debian\n"
         "                         (Debian 12's python3-opencv 4.6), 5.0, 5.1 "
         "(default)",
         0, 0},
        {"cv-cpu", CLI_STRING, &cpu, "P",
         "its code path: auto (default: what OpenCV picks on this CPU), sse (also\n"
         "                         cv2.setUseOptimized(False)), avx2, avx512",
         0, 0},
        {"isa", CLI_STRING, &isa_name, "NAME", CLI_ISA_HELP, 0, 0},
        {0}};
    const char *usage =
        "detfeed color --gains DH,DS,DV [--opencv V] [--cv-cpu P] IN.png "
        "OUT.png";
    const char *about =
        "Applies Ultralytics RandomHSV with the given gains to an 8-bit RGB or\n"
        "grayscale PNG, exactly as OpenCV's 8-bit arithmetic does it, and writes\n"
        "an RGB PNG. The conversion runs even when all three gains are 0.\n"
        "The bytes follow one OpenCV (--opencv) on one code path (--cv-cpu):\n"
        "OpenCV converts HSV to BGR in SIMD blocks of 16 (sse), 32 (avx2) or, in\n"
        "5.1, 64 (avx512) pixels and the rest of each row with scalar code that\n"
        "rounds differently. --isa only picks detfeed's implementation.";
    char *pos[2];
    int npos;
    int rc = cli_parse(argc, argv, opts, usage, about, pos, 2, &npos);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    double g[3];
    detfeed_isa isa;
    if (gains == NULL || npos != 2) {
        cli_error("usage: %s", usage);
        return CLI_USAGE;
    }
    if (!parse_gains(gains, g)) {
        cli_error("--gains: '%s' is not three finite numbers DH,DS,DV", gains);
        return CLI_USAGE;
    }
    detfeed_cv cv;
    if ((rc = stack_options(version, cpu, &cv)) != CLI_OK)
        return rc;
    if ((rc = cli_isa_option(isa_name, &isa)) != CLI_OK)
        return rc;
    return color_file(pos[0], pos[1], g, &cv, isa);
}
