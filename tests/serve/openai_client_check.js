// Drives a running hearth-serve with the official `openai` npm client
// (pinned: tests/serve/install_openai_client.sh). Run by
// openai_client_test.py, which starts the server:
//   node openai_client_check.js <client package dir> <port> <key> <metrics-only key>
// Prints "ok"/"FAIL" lines like serve_harness.Checks; exits 1 on any FAIL.
// The client's own parsing is the point: its page and stream readers, and
// the error class it picks from each status, must meet what the server sends.
'use strict';

const [pkg, port, key, scrapeKey] = process.argv.slice(2);
const mod = require(pkg);
const OpenAI = mod.OpenAI || mod.default || mod;

const failures = [];
function check(cond, what) {
  console.log((cond ? 'ok   ' : 'FAIL ') + what);
  if (!cond) failures.push(what);
}

// maxRetries 0: a retried 5xx or 429 would hide what the server answered.
function client(apiKey) {
  return new OpenAI({apiKey, baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0,
                     timeout: 60000});
}
const ai = client(key);
const MESSAGES = [{role: 'user', content: 'Hello, hearth.'}];

// The rejection of `call`, or null when it resolved.
async function rejection(call) {
  try {
    await call();
    return null;
  } catch (e) {
    return e;
  }
}

async function models() {
  const page = await ai.models.list();
  const ids = page.data.map((m) => m.id);
  check(ids.includes('tiny') && page.data.every((m) => m.object === 'model'),
        `models.list() lists tiny (${ids})`);
  const listed = [];
  for await (const m of ai.models.list()) listed.push(m.id);
  check(listed.join() === ids.join(), 'models.list() iterates the same models');
  const tiny = await ai.models.retrieve('tiny');
  check(tiny.id === 'tiny' && tiny.object === 'model', 'models.retrieve("tiny")');
  const e = await rejection(() => ai.models.retrieve('gpt-4o'));
  check(e instanceof OpenAI.NotFoundError && e.status === 404 && e.code === 'model_not_found',
        `models.retrieve("gpt-4o") is NotFoundError 404 (${e})`);
}

async function chat() {
  const body = {model: 'tiny', messages: MESSAGES, max_tokens: 6, temperature: 0};
  const whole = await ai.chat.completions.create(body);
  const choice = whole.choices[0];
  check(whole.object === 'chat.completion' && choice.message.role === 'assistant' &&
        typeof choice.message.content === 'string' && choice.message.content.length > 0 &&
        choice.finish_reason === 'length' && whole.usage.completion_tokens === 6,
        `chat.completions.create: ${JSON.stringify(choice.message.content)}`);
  check(/^req_[0-9a-f]{32}$/.test(whole._request_id || ''),
        `the client reads the x-request-id (${whole._request_id})`);
  const stream = await ai.chat.completions.create(
      {...body, stream: true, stream_options: {include_usage: true}});
  let text = '';
  let finish = null;
  let usage = null;
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      text += c.delta.content || '';
      finish = c.finish_reason || finish;
    }
    usage = chunk.usage || usage;
  }
  check(text === choice.message.content && finish === 'length' && usage &&
        usage.completion_tokens === 6, 'a streamed chat is the same greedy answer, with usage');
  const probs = await ai.chat.completions.create({...body, logprobs: true, top_logprobs: 2});
  const content = probs.choices[0].logprobs && probs.choices[0].logprobs.content;
  check(Array.isArray(content) && content.length === 6 &&
        content.every((t) => t.logprob <= 0 && t.top_logprobs.length === 2),
        'logprobs with top_logprobs 2 come back per token');
  // n choices: sampled apart, each seeded as the seed + its index alone.
  const hot = {...body, temperature: 1.5, seed: 11};
  const two = await ai.chat.completions.create({...hot, n: 2});
  const alone = await ai.chat.completions.create({...hot, seed: 12});
  check(two.choices.length === 2 && two.choices.every((c, i) => c.index === i) &&
        two.usage.completion_tokens === 12 &&
        two.choices[1].message.content === alone.choices[0].message.content,
        `n 2: two choices, the second what seed + 1 gives alone (${JSON.stringify(two.choices.map((c) => c.message.content))})`);
  const streamed = await ai.chat.completions.create({...hot, n: 2, stream: true});
  const texts = ['', ''];
  for await (const chunk of streamed) {
    for (const c of chunk.choices) texts[c.index] += c.delta.content || '';
  }
  check(texts[0] === two.choices[0].message.content && texts[1] === two.choices[1].message.content,
        'n 2 streamed: each choice by its index, the same texts');
}

async function completions() {
  const body = {model: 'tiny', prompt: 'The house', max_tokens: 5, temperature: 0};
  const whole = await ai.completions.create(body);
  check(whole.object === 'text_completion' && typeof whole.choices[0].text === 'string' &&
        whole.choices[0].finish_reason === 'length' && whole.usage.completion_tokens === 5,
        `completions.create: ${JSON.stringify(whole.choices[0].text)}`);
  let text = '';
  for await (const chunk of await ai.completions.create({...body, stream: true})) {
    text += chunk.choices.map((c) => c.text).join('');
  }
  check(text === whole.choices[0].text, 'a streamed completion is the same greedy answer');
}

async function errors() {
  const chatBody = {model: 'tiny', messages: MESSAGES, max_tokens: 2};
  // (The client itself refuses an empty key before sending.)
  let e = await rejection(() => client('sk-not-a-key').chat.completions.create(chatBody));
  check(e instanceof OpenAI.AuthenticationError && e.status === 401 &&
        e.code === 'invalid_api_key', 'a key of no member: AuthenticationError 401');
  // A metrics key may scrape, not generate.
  e = await rejection(() => client(scrapeKey).chat.completions.create(chatBody));
  check(e instanceof OpenAI.PermissionDeniedError && e.status === 403,
        `a metrics-only key: PermissionDeniedError 403 (${e && e.message})`);
  e = await rejection(() => ai.chat.completions.create({...chatBody, model: 'gpt-4o'}));
  check(e instanceof OpenAI.NotFoundError && e.status === 404 && /gpt-4o/.test(e.message),
        `an unknown model is NotFoundError 404 (${e && e.message})`);
  const refused = [
    ['n', {n: 9}],
    ['response_format.json_schema.schema',
     {response_format: {type: 'json_schema',
                        json_schema: {name: 'x', schema: {type: 'frobnicate'}}}}],
    ['tools', {tools: [{type: 'function', function: {name: 'f', parameters: {}}}]}],
    ['temperature', {temperature: 7}],
  ];
  for (const [param, extra] of refused) {
    e = await rejection(() => ai.chat.completions.create({...chatBody, ...extra}));
    check(e instanceof OpenAI.BadRequestError && e.status === 400 && e.param === param &&
          e.type === 'invalid_request_error' && e.message.includes(`'${param}'`),
          `${JSON.stringify(extra)}: BadRequestError 400 naming ${param} (${e && e.message})`);
  }
  e = await rejection(() => ai.completions.create({model: 'tiny', prompt: 'x', echo: true}));
  check(e instanceof OpenAI.BadRequestError && e.param === 'echo',
        'completions echo true: BadRequestError naming echo');
}

// Structured output: the client's parse() reads the answer of a
// json_schema response_format as JSON (message.parsed).
async function structuredOutput() {
  const schema = {
    type: 'object',
    properties: {name: {type: 'string', pattern: '^[A-Za-z]{1,12}$'},
                 age: {type: 'integer', minimum: 0, maximum: 30}},
    required: ['name', 'age'], additionalProperties: false,
  };
  const done = await ai.chat.completions.parse({
    model: 'tiny', messages: MESSAGES, max_tokens: 200, temperature: 0,
    response_format: {type: 'json_schema', json_schema: {name: 'pet', strict: true, schema}},
  });
  const choice = done.choices[0];
  const pet = choice.message.parsed;
  check(choice.finish_reason === 'stop' && pet && Object.keys(pet).join() === 'name,age' &&
        /^[A-Za-z]{1,12}$/.test(pet.name) && Number.isInteger(pet.age) &&
        pet.age >= 0 && pet.age <= 30,
        `chat.completions.parse: message.parsed follows the schema (${choice.message.content})`);
}

// Embeddings: the client asks for base64 by default and decodes it; the
// floats asked for as such must be the same vectors.
async function embeddings() {
  const texts = ['the kitchen light is on', 'hello'];
  const decoded = await ai.embeddings.create({model: 'tiny', input: texts});
  const floats = await ai.embeddings.create({model: 'tiny', input: texts,
                                             encoding_format: 'float'});
  const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  const sameVector = (a, b) => a.length === b.length && a.every((x, i) => Math.abs(x - b[i]) < 1e-6);
  check(decoded.data.length === 2 && decoded.data.every((d, i) => d.index === i) &&
        decoded.data.every((d) => Array.isArray(d.embedding) && d.embedding.length === 64 &&
                                  Math.abs(norm(d.embedding) - 1) < 1e-4),
        'embeddings.create: two unit vectors of 64 floats, in order');
  check(floats.data.every((d, i) => sameVector(d.embedding, decoded.data[i].embedding)),
        'base64 (the default) and float give the same vectors');
  check(decoded.usage && decoded.usage.prompt_tokens === 28, 'usage counts the inputs\' tokens');
  const bad = await rejection(() => ai.embeddings.create({model: 'tiny', input: ''}));
  check(bad instanceof OpenAI.BadRequestError && bad.param === 'input',
        `an empty input is BadRequestError naming input (${bad && bad.message})`);
  const stranger = await rejection(
      () => client('sk-not-a-key').embeddings.create({model: 'tiny', input: 'hello'}));
  check(stranger instanceof OpenAI.AuthenticationError, 'without a key it is 401 first');
}

async function main() {
  for (const part of [models, chat, completions, structuredOutput, errors, embeddings]) {
    try {
      await part();
    } catch (e) {
      check(false, `${part.name} threw ${e && e.stack}`);
    }
  }
  console.log(failures.length ? `openai client: ${failures.length} check(s) failed`
                              : 'openai client: all checks passed');
  process.exit(failures.length ? 1 : 0);
}

main();
