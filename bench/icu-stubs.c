/* SPDX-License-Identifier: MIT */
/*
** icu-stubs.c - the seven ICU converter calls that Debian's static
** libxml2.a refers to (its encoding handlers), each failing: the device
** bundle's static atompeers links libxml2 without ICU, whose data alone
** is 30 MB. atompeers calls only xmlDictCreate, xmlDictLookup and
** xmlDictFree, which convert no encodings; a converter libxml2 asked for
** would not open (U_FILE_ACCESS_ERROR), as with a missing ICU data file.
** Linked into build/device/atompeers only (make device-bundle).
*/
#include <stddef.h>

enum { U_FILE_ACCESS_ERROR = 4 };

void *ucnv_open_72(const char *name, int *err);
void ucnv_close_72(void *cnv);
void ucnv_convertEx_72(void *to, void *from, char **t, const char *tl, const char **s,
                       const char *sl, void *ps, void **pss, void **pst, const void *pl,
                       char reset, char flush, int *err);
void ucnv_setFromUCallBack_72(void *cnv, void *cb, const void *ctx, void *old, const void **oldctx,
                              int *err);
void ucnv_setToUCallBack_72(void *cnv, void *cb, const void *ctx, void *old, const void **oldctx,
                            int *err);
void UCNV_FROM_U_CALLBACK_STOP_72(void);
void UCNV_TO_U_CALLBACK_STOP_72(void);

void *ucnv_open_72(const char *name, int *err)
{
    (void)name;
    if (err)
        *err = U_FILE_ACCESS_ERROR;
    return NULL;
}

void ucnv_close_72(void *cnv) { (void)cnv; }

void ucnv_convertEx_72(void *to, void *from, char **t, const char *tl, const char **s,
                       const char *sl, void *ps, void **pss, void **pst, const void *pl,
                       char reset, char flush, int *err)
{
    (void)to, (void)from, (void)t, (void)tl, (void)s, (void)sl, (void)ps, (void)pss;
    (void)pst, (void)pl, (void)reset, (void)flush;
    if (err)
        *err = U_FILE_ACCESS_ERROR;
}

void ucnv_setFromUCallBack_72(void *cnv, void *cb, const void *ctx, void *old, const void **oldctx,
                              int *err)
{
    (void)cnv, (void)cb, (void)ctx, (void)old, (void)oldctx;
    if (err)
        *err = U_FILE_ACCESS_ERROR;
}

void ucnv_setToUCallBack_72(void *cnv, void *cb, const void *ctx, void *old, const void **oldctx,
                            int *err)
{
    (void)cnv, (void)cb, (void)ctx, (void)old, (void)oldctx;
    if (err)
        *err = U_FILE_ACCESS_ERROR;
}

void UCNV_FROM_U_CALLBACK_STOP_72(void) {}
void UCNV_TO_U_CALLBACK_STOP_72(void) {}
