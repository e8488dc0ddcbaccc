/**
 * A district's OneRoster 1.2 bulk CSV export for the roster benchmarks, every personal column
 * filled as a district's system fills it: `students` students in `schools` schools (one in twenty
 * at a second school), a teacher per 20 students, written line by line into a folder, and the
 * same files as a .zip (deflated, built here with node:zlib so the benchmark needs no package).
 */
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'

const FIRST_NAMES = ['Ada', 'Ben', 'Cara', 'Dmitri', 'Eun-ji', 'Farah', 'Gustavo', 'Hana', "D'Andre", 'Zoë']
const MANIFEST = [
  'propertyName,value',
  'manifest.version,1.0',
  'oneroster.version,1.2',
  'file.orgs,bulk',
  'file.users,bulk',
  'file.roles,bulk',
  'file.enrollments,absent',
]
const USERS =
  'sourcedId,status,dateLastModified,enabledUser,username,givenName,familyName,middleName,email,phone,grades'
const ROLES = 'sourcedId,status,dateLastModified,userSourcedId,roleType,role,beginDate,orgSourcedId'

const uuid = (n) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

function writeLines(file, header, rows) {
  const fd = fs.openSync(file, 'w')
  let text = `${header}\r\n`
  for (const row of rows) {
    text += `${row}\r\n`
    if (text.length > 1 << 20) {
      fs.writeSync(fd, text)
      text = ''
    }
  }
  fs.writeSync(fd, text)
  fs.closeSync(fd)
}

/** Writes the export into `folder` and `zipFile`; returns the CSV bytes. */
export function writeRosterExport(folder, zipFile, { students, schools = 40 }) {
  fs.mkdirSync(folder, { recursive: true })
  const teachers = Math.ceil(students / 20)
  fs.writeFileSync(path.join(folder, 'manifest.csv'), `${MANIFEST.join('\r\n')}\r\n`)
  writeLines(path.join(folder, 'orgs.csv'), 'sourcedId,status,dateLastModified,name,type,identifier', [
    'district,,,District,district,D1',
    ...Array.from({ length: schools }, (_, i) => `school-${i},,,School ${i},school,S${i}`),
  ])
  writeLines(
    path.join(folder, 'users.csv'),
    USERS,
    (function* () {
      for (let n = 0; n < students + teachers; n++) {
        const given = FIRST_NAMES[n % FIRST_NAMES.length]
        yield `${uuid(n)},,,true,user${n},${given.includes("'") ? `"${given}"` : given},Family${n},Middle,` +
          `user${n}@students.example.org,555-0100,05`
      }
    })(),
  )
  writeLines(
    path.join(folder, 'roles.csv'),
    ROLES,
    (function* () {
      for (let n = 0; n < students + teachers; n++) {
        const role = n < students ? 'student' : 'teacher'
        yield `r${n},,,${uuid(n)},primary,${role},2026-08-15,school-${n % schools}`
        if (n % 20 === 0 && n < students)
          yield `r${n}b,,,${uuid(n)},secondary,${role},2026-08-15,school-${(n + 1) % schools}`
      }
    })(),
  )
  const names = ['manifest.csv', 'orgs.csv', 'users.csv', 'roles.csv']
  writeZip(
    zipFile,
    names.map((name) => ({ name, data: fs.readFileSync(path.join(folder, name)) })),
  )
  return names.reduce((sum, name) => sum + fs.statSync(path.join(folder, name)).size, 0)
}

function writeZip(file, items) {
  const locals = []
  const directory = []
  let offset = 0
  for (const { name, data } of items) {
    const body = zlib.deflateRawSync(data)
    const nameBytes = Buffer.from(name)
    const crc = zlib.crc32(data)
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt16LE(8, 8)
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(body.length, 18)
    local.writeUInt32LE(data.length, 22)
    local.writeUInt16LE(nameBytes.length, 26)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0)
    central.writeUInt16LE(20, 4)
    central.writeUInt16LE(20, 6)
    central.writeUInt16LE(8, 10)
    central.writeUInt32LE(crc, 16)
    central.writeUInt32LE(body.length, 20)
    central.writeUInt32LE(data.length, 24)
    central.writeUInt16LE(nameBytes.length, 28)
    central.writeUInt32LE(offset, 42)
    locals.push(local, nameBytes, body)
    directory.push(central, nameBytes)
    offset += local.length + nameBytes.length + body.length
  }
  const dir = Buffer.concat(directory)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(items.length, 8)
  end.writeUInt16LE(items.length, 10)
  end.writeUInt32LE(dir.length, 12)
  end.writeUInt32LE(offset, 16)
  fs.writeFileSync(file, Buffer.concat([...locals, dir, end]))
}
