import {getLlama} from "node-llama-cpp";
import fs from "fs";
const strings = JSON.parse(fs.readFileSync("strings.json", "utf8"));
const [,, p, startS] = process.argv;
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath: p, vocabOnly: true});
for (let i = +startS; i < strings.length; i++) {
  const s = strings[i];
  fs.writeSync(1, "TRY " + i + "\n");
  const plain = Array.from(model.tokenize(s, false));
  const special = Array.from(model.tokenize(s, true));
  fs.writeSync(1, JSON.stringify({i, plain, special, detok: model.detokenize(plain, false)}) + "\n");
}
fs.writeSync(1, "DONE\n");
