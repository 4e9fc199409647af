// llamacpp_check.mjs loads synthetic GGUF files with llama.cpp (through the npm package
// node-llama-cpp, CPU prebuilt binaries, no download or build) and generates a few
// tokens from each, printing the model's tensor/metadata summary and the continuation.
// It is not run by `go test`. Usage, from a scratch directory outside the repository
// where `npm install node-llama-cpp` was run:
//
//   node /path/to/engine/synth/testdata/llamacpp_check.mjs model1.gguf [model2.gguf ...]
//
// It exits non-zero if any model fails to load or to generate.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

// Resolve node-llama-cpp from the current directory (the scratch install), not from
// this file's location inside the repository.
const requireHere = createRequire(pathToFileURL(process.cwd() + "/").href);
const { getLlama, LlamaCompletion } = await import(pathToFileURL(requireHere.resolve("node-llama-cpp")).href);

const paths = process.argv.slice(2);
if (paths.length === 0) {
    console.error("usage: node llamacpp_check.mjs model.gguf ...");
    process.exit(2);
}

const llama = await getLlama({ gpu: false, build: "never", logLevel: "warn" });
let failed = 0;
for (const path of paths) {
    try {
        const t0 = Date.now();
        const model = await llama.loadModel({ modelPath: path });
        const context = await model.createContext({ contextSize: 256 });
        const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
        const prompt = "Once upon a time";
        const tokens = model.tokenize(prompt);
        const text = await completion.generateCompletion(prompt, { maxTokens: 16, temperature: 0 });
        const textSampled = await completion.generateCompletion(prompt, { maxTokens: 16, temperature: 0.8, seed: 1 });
        console.log(JSON.stringify({
            path,
            ok: true,
            trainContextSize: model.trainContextSize,
            size: model.size,
            promptTokens: Array.from(tokens),
            detokenized: model.detokenize(tokens),
            greedy: text,
            sampled: textSampled,
            ms: Date.now() - t0,
        }));
        await context.dispose();
        await model.dispose();
    } catch (err) {
        failed++;
        console.log(JSON.stringify({ path, ok: false, error: String(err && err.stack || err) }));
    }
}
process.exit(failed ? 1 : 0);
