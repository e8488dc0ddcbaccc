/**
 * The roster upload form as it arrives: multipart/form-data, read part by part. Its CSRF token
 * is the form's first field and is checked before any byte of the file is written; a form cut
 * short or over a limit leaves no file behind.
 */
import type { FastifyRequest } from 'fastify'
import type { RosterUploads, SavedUpload } from '../../../../services/roster-uploads.js'
import { verifyCsrf } from '../../../csrf.js'
import { DashboardError } from '../../../dashboard-error.js'

export interface UploadForm {
  fields: Record<string, string>
  /** Undefined when the form held no file. */
  saved: SavedUpload | undefined
  fileName: string
}

export async function readUploadForm(request: FastifyRequest, uploads: RosterUploads): Promise<UploadForm> {
  if (!request.isMultipart())
    throw new DashboardError(400, 'The form could not be read', 'Send the form from its page in the dashboard.')
  const fields: Record<string, string> = {}
  let saved: SavedUpload | undefined
  let fileName = ''
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        fields[part.fieldname] = String(part.value)
        if (part.fieldname === '_csrf') verifyCsrf(request, request.csrfToken, fields._csrf)
        continue
      }
      if (fields._csrf === undefined) verifyCsrf(request, request.csrfToken, undefined)
      fileName = part.filename
      saved = await uploads.save(part.file, () => part.file.truncated)
    }
  } catch (error) {
    if (saved?.ok === true) uploads.remove(saved.token)
    throw error
  }
  if (fields._csrf === undefined) verifyCsrf(request, request.csrfToken, undefined)
  return { fields, saved, fileName }
}
