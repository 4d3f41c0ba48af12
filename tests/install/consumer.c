/*
 * consumer.c - a program that uses an installed libdetfeed as a C user's
 * program does: it includes the installed headers only (nothing of the
 * source tree) and checks a few answers of the library it was linked with.
 * tests/install/run.sh builds it with pkg-config (shared and static) and
 * with find_package(detfeed).
 *
 * The calls are chosen so that a static link must resolve each private
 * dependency the installed files declare: decoding a JPEG needs
 * libturbojpeg, a PNG libspng and zlib, and in a build with the CUDA part
 * the device count needs the static CUDA runtime and the colour kernel's
 * entry point the C++ runtime. None needs a GPU or a data file.
 *
 * Usage: consumer CUDA, where CUDA (0 or 1) says whether the install was
 * built with the CUDA part. Exits 0 when every check passes, 1 otherwise.
 */
#include <detfeed.h>
#include <detfeed_cuda.h>
#include <detfeed_img.h>

#include <stdio.h>
#include <string.h>

/* An 8x8 baseline grayscale JPEG, every sample 200, quality 100: only the
 * DC coefficients are non-zero and quantised by 1, so every sample decodes
 * to exactly 200, expanded to B = G = R. */
static const unsigned char jpeg_gray200[] = {
    0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00,
    0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0xdb, 0x00, 0x43, 0x00, 0x01, 0x01, 0x01,
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
    0x01, 0x01, 0x01, 0x01, 0x01, 0xff, 0xc0, 0x00, 0x0b, 0x08, 0x00, 0x08, 0x00, 0x08,
    0x01, 0x01, 0x11, 0x00, 0xff, 0xc4, 0x00, 0x14, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0xff, 0xc4,
    0x00, 0x14, 0x10, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00,
    0x3f, 0x00, 0x48, 0x0f, 0xff, 0xd9,
};

/* A 2x1 8-bit RGB PNG, its IDAT deflate-compressed (zlib inflates it): RGB
 * (30, 20, 10) and (50, 100, 200), which decode as BGR to the bytes below. */
static const unsigned char png_2x1[] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d,
    0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01,
    0x08, 0x02, 0x00, 0x00, 0x00, 0x7b, 0x40, 0xe8, 0xdd, 0x00, 0x00, 0x00,
    0x0f, 0x49, 0x44, 0x41, 0x54, 0x08, 0xd7, 0x63, 0x94, 0x13, 0xe1, 0x12,
    0x09, 0xd8, 0x07, 0x00, 0x02, 0xe8, 0x01, 0x60, 0x42, 0x07, 0xa9, 0x2a,
    0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
};
static const uint8_t png_2x1_bgr[] = {10, 20, 30, 200, 100, 50};

static int failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "consumer: FAIL %s\n", what);
        failures++;
    }
}

/* Decodes `size` bytes and compares the image with `expect` (BGR, stride
 * 3 * width). */
static void check_decode(detfeed_codec *codec, const char *name, const void *data,
                         size_t size, int width, int height, const uint8_t *expect)
{
    uint8_t *pixels = NULL;
    int w = 0, h = 0;
    int rc = detfeed_codec_decode(codec, data, size, name, &pixels, &w, &h);
    if (rc != DETFEED_OK) {
        fprintf(stderr, "consumer: FAIL decoding %s: %s (%s)\n", name,
                detfeed_strerror(rc), detfeed_codec_last_error(codec));
        failures++;
        return;
    }
    if (w != width || h != height) {
        fprintf(stderr, "consumer: FAIL %s decoded as %dx%d, not %dx%d\n", name, w, h,
                width, height);
        failures++;
    } else if (memcmp(pixels, expect, (size_t)width * (size_t)height * 3) != 0) {
        fprintf(stderr, "consumer: FAIL %s decoded to other pixels\n", name);
        failures++;
    }
    detfeed_free(pixels);
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "0") != 0 && strcmp(argv[1], "1") != 0)) {
        fprintf(stderr, "usage: consumer CUDA (0 or 1: built with the CUDA part)\n");
        return 2;
    }
    int cuda = argv[1][0] == '1';

    /* The library linked is the one the headers describe. */
    char version[32];
    snprintf(version, sizeof version, "%d.%d.%d", DETFEED_VERSION_MAJOR,
             DETFEED_VERSION_MINOR, DETFEED_VERSION_PATCH);
    check(detfeed_version_number() == DETFEED_VERSION_NUMBER, "detfeed_version_number");
    check(strcmp(detfeed_version_string(), version) == 0, "detfeed_version_string");
    check(detfeed_abi_version() == DETFEED_ABI_VERSION, "detfeed_abi_version");
    check(strcmp(detfeed_strerror(DETFEED_EFORMAT), "unknown status") != 0,
          "detfeed_strerror");

    detfeed_codec *codec = NULL;
    int rc = detfeed_codec_create(&codec, 0);
    check(rc == DETFEED_OK && codec != NULL, "detfeed_codec_create");
    if (codec) {
        uint8_t gray[8 * 8 * 3];
        memset(gray, 200, sizeof gray);
        check_decode(codec, "gray200.jpg", jpeg_gray200, sizeof jpeg_gray200, 8, 8,
                     gray);
        check_decode(codec, "2x1.png", png_2x1, sizeof png_2x1, 2, 1, png_2x1_bgr);
        uint8_t *pixels = NULL;
        int w, h;
        static const char text[] = "not an image";
        check(detfeed_codec_decode(codec, text, sizeof text, "text", &pixels, &w, &h) ==
                  DETFEED_EFORMAT,
              "decoding text is DETFEED_EFORMAT");
        detfeed_codec_destroy(codec);
    }

    /* Without a GPU (or a driver) the count is 0 with a reason; a NULL
     * stack is refused before any device is touched, or, without the
     * CUDA part, the kernel is not supported at all. */
    check(detfeed_cuda_built() == cuda, "detfeed_cuda_built");
    const char *why = NULL;
    int devices = detfeed_cuda_device_count(&why);
    check(devices >= 0 && (devices > 0 || why != NULL), "detfeed_cuda_device_count");
    if (!cuda)
        check(devices == 0, "no devices without the CUDA part");
    check(detfeed_cuda_color_convert(NULL, 1, 8, 8, NULL, NULL, NULL, DETFEED_DTYPE_U8,
                                     DETFEED_SCALE_QUOTIENT, NULL) ==
              (cuda ? DETFEED_EINVAL : DETFEED_ENOTSUPPORTED),
          "detfeed_cuda_color_convert without a stack");

    if (failures) {
        fprintf(stderr, "consumer: %d check(s) failed\n", failures);
        return 1;
    }
    printf("consumer: detfeed %s (ABI %d), JPEG and PNG decoded, CUDA part %d, "
           "%d device(s) (%s)\n",
           detfeed_version_string(), detfeed_abi_version(), detfeed_cuda_built(),
           devices, devices ? "found" : why);
    return 0;
}
