#version 330 core
// Dear ImGui: vertex colour times the texture (the font atlas or a user image).

in vec2 v_uv;
in vec4 v_color;

uniform sampler2D u_texture;

out vec4 f_color;

void main() {
    f_color = v_color * texture(u_texture, v_uv);
}
