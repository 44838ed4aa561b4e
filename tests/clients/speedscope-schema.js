// node speedscope-schema.js SCHEMA FILE: validates a speedscope JSON file
// against the file-format schema the speedscope npm package ships, with ajv.
'use strict';
const fs = require('fs');
const Ajv = require('ajv');

const [schemaPath, filePath] = process.argv.slice(2);
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
const data = JSON.parse(fs.readFileSync(filePath, 'utf8'));
// The schema is draft-07 with its root under #/definitions/FileFormat.File.
const ajv = new Ajv({ allErrors: true, strict: false });
ajv.addSchema(schema, 'speedscope');
const validate = ajv.getSchema('speedscope#/definitions/FileFormat.File');
if (!validate) {
	console.error('the schema has no FileFormat.File definition');
	process.exit(2);
}
if (!validate(data)) {
	console.error(JSON.stringify(validate.errors, null, 2));
	process.exit(1);
}
console.log(`valid: ${data.profiles.length} profile(s), ${data.shared.frames.length} frames`);
