/*
 * recipe_json.c - a sample's recipe (detfeed_loader_recipe) as one JSON
 * object, for `detfeed sample`. Numbers are written with 17 significant
 * digits, so each double reads back as itself.
 */
#include "cli.h"

static const char *json_bool(int v)
{
    return v ? "true" : "false";
}

/* One image's draws before its transforms, as JSON members (no braces). */
static void geometry_json(FILE *out, const detfeed_recipe_geometry *g)
{
    fprintf(out,
            "\"mosaic\":%s,\"partners\":[%llu,%llu,%llu],\"yc\":%d,\"xc\":%d,"
            "\"perspective\":[%.17g,%.17g],\"angle\":%.17g,\"scale\":%.17g,"
            "\"shear\":[%.17g,%.17g],\"translate\":[%.17g,%.17g]",
            json_bool(g->mosaic), (unsigned long long)g->partners[0],
            (unsigned long long)g->partners[1], (unsigned long long)g->partners[2],
            g->yc, g->xc, g->perspective[0], g->perspective[1], g->angle, g->scale,
            g->shear[0], g->shear[1], g->translate[0], g->translate[1]);
}

void cli_recipe_json(FILE *out, const detfeed_recipe *r)
{
    fprintf(out, "{\"epoch\":%u,\"index\":%llu,", r->epoch,
            (unsigned long long)r->index);
    geometry_json(out, &r->geometry);
    fprintf(out,
            ",\"mixup\":%s,\"mix_partner\":%llu,\"mix_ratio\":%.17g,\"mix_recipe\":{",
            json_bool(r->mixup), (unsigned long long)r->mix_partner, r->mix_ratio);
    geometry_json(out, &r->mix_geometry);
    fprintf(out,
            "},\"hsv\":%s,\"gains\":[%.17g,%.17g,%.17g],\"flipud\":%s,\"fliplr\":%s,"
            "\"bgr\":%s,\"cutmix\":%s,\"cut_partner\":%llu,\"cut_recipe\":{",
            json_bool(r->hsv), r->gains[0], r->gains[1], r->gains[2],
            json_bool(r->flipud), json_bool(r->fliplr), json_bool(r->bgr),
            json_bool(r->cutmix), (unsigned long long)r->cut_partner);
    geometry_json(out, &r->cut_geometry);
    fputs("},\"cut_areas\":[", out);
    for (int k = 0; k < 3; k++)
        fprintf(out, "%s[%d,%d,%d,%d]", k ? "," : "", r->cut_areas[k][0],
                r->cut_areas[k][1], r->cut_areas[k][2], r->cut_areas[k][3]);
    fprintf(out,
            "],\"cut_choice\":%.17g,\"copy_paste\":%s,\"cp_partner\":%llu,"
            "\"cp_recipe\":{",
            r->cut_choice, json_bool(r->copy_paste), (unsigned long long)r->cp_partner);
    geometry_json(out, &r->cp_geometry);
    fprintf(out, "},\"augment\":%s}", json_bool(r->augment));
}
