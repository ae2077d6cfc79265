#version 330 core
// Upscales the 3D viewport, rendered at a fraction of the window resolution: the texture's
// bilinear filter does the interpolation.

in vec2 v_uv;

uniform sampler2D u_texture;

out vec4 f_color;

void main() {
    f_color = vec4(texture(u_texture, v_uv).rgb, 1.0);
}
