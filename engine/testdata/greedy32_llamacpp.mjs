// greedy32_llamacpp.mjs prints, byte for byte, the 32-token greedy continuation of
// "Once upon a time" that llama.cpp (through the npm package node-llama-cpp, CPU
// prebuilt binaries) generates from one GGUF file. The engine tests run it where .ci/run
// installed node-llama-cpp (tools/node-llama-cpp) and otherwise compare with the text
// it recorded. Usage,
// from a scratch directory where `npm install node-llama-cpp` was run:
//
//   node /path/to/engine/testdata/greedy32_llamacpp.mjs model.gguf > greedy.txt
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const requireHere = createRequire(pathToFileURL(process.cwd() + "/").href);
const { getLlama, LlamaCompletion } = await import(pathToFileURL(requireHere.resolve("node-llama-cpp")).href);
if (process.argv.length !== 3) {
    console.error("usage: node greedy32_llamacpp.mjs model.gguf");
    process.exit(2);
}
const llama = await getLlama({ gpu: false, build: "never", logLevel: "warn" });
const model = await llama.loadModel({ modelPath: process.argv[2] });
const context = await model.createContext({ contextSize: 256 });
const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
process.stdout.write(await completion.generateCompletion("Once upon a time", { maxTokens: 32, temperature: 0 }));
