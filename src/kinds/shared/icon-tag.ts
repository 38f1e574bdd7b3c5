/**
 * Icons. Cortex accepts any `iconTag` but keeps only the icons it ships (`Cortex-builtin::Robot`):
 * anything else is stored as a default icon of the server's choosing, which is not documented
 * (an invalid iconTag is accepted and replaced by a default icon). So a declared
 * icon is compared only when it names a built-in icon; otherwise whatever the server shows in its
 * place is accepted, and `validate` warns that the icon will not be kept.
 */
import type { Diagnostic, KindName, ParsedDocument } from '../../core/model.js';

/** The form of Cortex's own icons: `Cortex-builtin::` and a name. */
const BUILT_IN_ICON_TAG = /^Cortex-builtin::[A-Za-z][A-Za-z0-9-]*$/;

const isBuiltInIconTag = (iconTag: string): boolean => BUILT_IN_ICON_TAG.test(iconTag);

/** The icon to compare on both sides: the declared one when it is built in, else nothing. */
export const comparedIconTag = (declared: string | undefined): string | undefined =>
  declared !== undefined && isBuiltInIconTag(declared) ? declared : undefined;

/** The live icon to compare with a manifest: compared only when the manifest's icon is built in. */
export const comparedLiveIconTag = (
  live: string | null | undefined,
  declared: string | undefined,
): string | undefined => (comparedIconTag(declared) === undefined ? undefined : (live ?? undefined));

/** A located warning for a declared icon Cortex will not keep, or nothing. */
export const iconTagWarning = (
  iconTag: string | undefined,
  doc: ParsedDocument,
  subject: { kind: KindName; id: string },
): Diagnostic | undefined => {
  if (iconTag === undefined || isBuiltInIconTag(iconTag)) return undefined;
  const at = doc.locate(['iconTag']);
  return {
    severity: 'warning',
    code: 'icon-not-kept',
    message: `iconTag: '${iconTag}' is not a built-in icon (Cortex-builtin::<Name>); Cortex replaces it with a default icon, so it is not compared`,
    file: doc.file,
    line: at.line,
    column: at.column,
    field: 'iconTag',
    ...subject,
  };
};
