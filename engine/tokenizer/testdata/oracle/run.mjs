import {getLlama} from "node-llama-cpp";
import fs from "fs";
const strings = JSON.parse(fs.readFileSync("strings.json", "utf8"));
const models = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const res = {strings, models: {}};
for (const p of models) {
  const name = p.split("/").pop();
  try {
    const model = await llama.loadModel({modelPath: p, vocabOnly: true});
    const plain = strings.map(s => Array.from(model.tokenize(s, false)));
    const special = strings.map(s => Array.from(model.tokenize(s, true)));
    const bos = Array.from(model.tokenize("Once upon a time", false));
    res.models[name] = {plain, special, detok: plain.map(ids => model.detokenize(ids, false))};
    await model.dispose();
    console.error("ok", name);
  } catch (e) { console.error("fail", name, e.message); }
}
fs.writeFileSync("oracle.json", JSON.stringify(res));
