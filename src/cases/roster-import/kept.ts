/**
 * What a roster import keeps and never keeps, as its preview says it (CLI and dashboard alike).
 */

export const KEPT_FIELDS =
  "Kept of each student: the district's id for it (sourcedId), the first name (preferredGivenName when given, " +
  'else givenName) and its schools; of each school: its id, name and identifier.'
export const NEVER_KEPT =
  'Never stored, logged or shown: family and middle names, e-mail addresses, usernames, phone numbers, birth ' +
  "dates, demographics and every other field of the export; teachers', parents' and other users' rows."
