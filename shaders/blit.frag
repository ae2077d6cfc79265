#version 330 core
// Upscales the 3D viewport, rendered at a fraction of the window resolution: the texture's
// bilinear filter does the interpolation. SWAP_RB (defined by studio/viewport.py where the
// driver's fast path needs it) exchanges red and blue.

in vec2 v_uv;

uniform sampler2D u_texture;

out vec4 f_color;

void main() {
#ifdef SWAP_RB
    f_color = vec4(texture(u_texture, v_uv).bgr, 1.0);
#else
    f_color = vec4(texture(u_texture, v_uv).rgb, 1.0);
#endif
}
