// Validates JSON files against the witness-gate schemas with Ajv 8 (2020-12 mode).
// Usage: node validate.mjs <schemas dir> <schema name>=<file> ...
// Prints one JSON object: {"<file>": true | false}. Exits 0 when every file is valid, 1 when
// one is not, 2 when a schema fails to compile (nothing is printed then).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const [schemasDir, ...pairs] = process.argv.slice(2);
const ajv = new Ajv2020({ strict: true, allErrors: false });
addFormats(ajv);
const validators = new Map();
const results = {};
for (const pair of pairs) {
  const [name, file] = pair.split(/=(.*)/s);
  if (!validators.has(name)) {
    try {
      validators.set(name, ajv.compile(JSON.parse(readFileSync(join(schemasDir, `${name}.schema.json`), "utf8"))));
    } catch (error) {
      process.stderr.write(`${name}.schema.json: ${error.message}\n`);
      process.exit(2);
    }
  }
  let document;
  try {
    document = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    results[file] = false;
    continue;
  }
  results[file] = validators.get(name)(document);
}
process.stdout.write(JSON.stringify(results) + "\n");
process.exitCode = Object.values(results).every(Boolean) ? 0 : 1;
