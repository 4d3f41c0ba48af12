/*
 * abi.c - the ABI version of the library as built.
 */
#include "internal.h"

int detfeed_abi_version(void)
{
    return DETFEED_ABI_VERSION;
}
