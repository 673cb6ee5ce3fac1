// protoc-gen-openapi entry point: buf generate runs it (see buf.gen.yaml) with a CodeGeneratorRequest on stdin.
import { runNodeJs } from "@bufbuild/protoplugin";
import { openapiPlugin } from "./plugin.js";

runNodeJs(openapiPlugin);
