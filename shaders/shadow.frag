#version 330 core
// Depth-only pass: the depth buffer is the output.

void main() {
}
